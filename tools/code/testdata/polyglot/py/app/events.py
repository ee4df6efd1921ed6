class EventBus:
    def __init__(self):
        self.listeners = []

    def subscribe(self, fn):
        self.listeners.append(fn)

    def publish(self, event):
        for fn in self.listeners:
            fn(event)
