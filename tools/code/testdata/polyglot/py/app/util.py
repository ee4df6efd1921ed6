# Utilities shared by the app.


def helper(value):
    return value.upper()


class Config:
    _instance = None

    def __new__(cls):
        # Only one configuration per process.
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance
