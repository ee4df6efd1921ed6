import os

import requests

from app.util import helper

# Entry point of the command line tool.


def run(argv):
    if argv and len(argv) > 1:
        return helper(argv[1])
    return requests.get(os.environ.get("URL", "http://localhost"))


if __name__ == "__main__":
    run(["app", "x"])
