import hashlib
import os
import pickle
import random
import subprocess

import requests
import yaml
from Crypto.Cipher import DES


def find_user(cursor, uid):
    cursor.execute("SELECT * FROM users WHERE id = " + uid)
    return cursor.execute(f"SELECT name FROM users WHERE email = '{uid}'")


def run(cmd, expr, blob, text):
    os.system(cmd)
    subprocess.run(cmd, shell=True)
    eval(expr)
    obj = pickle.loads(blob)
    cfg = yaml.load(text)
    digest = hashlib.md5(blob).hexdigest()
    cipher = DES.new(b"8bytekey")
    requests.get("https://internal.example", verify=False)
    reset_token = random.randint(100000, 999999)
    return obj, cfg, digest, cipher, reset_token
