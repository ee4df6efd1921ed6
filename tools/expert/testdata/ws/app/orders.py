import sqlite3


class OrderRepository:
    def __init__(self, path):
        self.db = sqlite3.connect(path)

    def find(self, customer):
        return self.db.execute("SELECT * FROM orders WHERE customer = '" + customer + "'").fetchall()

    def total(self, order_id):
        rows = self.db.execute("SELECT amount FROM lines WHERE order_id = ?", (order_id,))
        return sum(r[0] for r in rows)
