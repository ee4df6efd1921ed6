//! Networking.

pub struct Client {
    pub port: u16,
}

impl Client {
    pub fn new() -> Self {
        Client { port: 80 }
    }

    pub fn ready(&self) -> bool {
        match self.port {
            0 => false,
            _ => true,
        }
    }
}
