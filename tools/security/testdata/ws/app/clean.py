import hashlib
import random
import secrets
import subprocess

import yaml


def find_user(cursor, uid):
    # Never: cursor.execute("SELECT * FROM users WHERE id = " + uid); eval(uid); os.system(uid)
    cursor.execute("SELECT * FROM users WHERE id = %s", (uid,))
    note = "os.system(cmd) and eval(x) and pickle.loads(b) are only words in this string"
    subprocess.run(["ls", "-l"], check=True)
    cfg = yaml.safe_load("a: 1")
    digest = hashlib.sha256(b"x").hexdigest()
    token = secrets.token_urlsafe(32)
    jitter = random.random()
    return note, cfg, digest, token, jitter
