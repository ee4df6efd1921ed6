mod net;

use crate::net::Client;
use serde::Serialize;

/// Starts the client.
fn main() {
    let c = Client::new(); // connect
    if c.ready() && c.port > 0 {
        println!("ready");
    }
}
