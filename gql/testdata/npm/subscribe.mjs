// Subscribes to the cheap products of the API at addr with the graphql-ws client (WebSocket,
// graphql-transport-ws) and the graphql-sse client (distinct connections mode), creates
// products over HTTP until both have seen one, and prints the first event of each:
// node subscribe.mjs 127.0.0.1:8080 <token>
import http from 'node:http';
import WebSocket from 'ws';
import { createClient as createWSClient } from 'graphql-ws';
import { createClient as createSSEClient } from 'graphql-sse';

const [, , addr, token] = process.argv;
const authorization = `Bearer ${token}`;
const query = 'subscription { products(where: {price: {lt: 10}}) { op record { name price } } }';

const ws = createWSClient({ url: `ws://${addr}/api/v1/graphql`, webSocketImpl: WebSocket, connectionParams: { Authorization: authorization }, retryAttempts: 0 });
const sse = createSSEClient({ url: `http://${addr}/api/v1/graphql`, headers: { Authorization: authorization }, retryAttempts: 0 });

function first(client, name) {
  return new Promise((resolve, reject) => {
    const stop = client.subscribe({ query }, {
      next: (result) => { console.log(name, JSON.stringify(result)); stop(); resolve(); },
      error: (err) => reject(new Error(`${name}: ${err instanceof Error ? err.message : JSON.stringify(err)}`)),
      complete: () => {},
    });
  });
}

function create(name, price) {
  const body = JSON.stringify({ query: 'mutation ($data: productInput!) { createProduct(data: $data) { uid } }', variables: { data: { name, price } } });
  const [hostname, port] = addr.split(':');
  return new Promise((resolve, reject) => {
    const req = http.request({ hostname, port, path: '/api/v1/graphql', method: 'POST', headers: { authorization, 'content-type': 'application/json' } }, (res) => {
      res.resume(); res.on('end', resolve);
    });
    req.on('error', reject);
    req.end(body);
  });
}

// A subscription gives no sign that it is running, so a product is created every 100 ms
// until both clients have seen one; an expensive one, which neither may see, goes first.
let done = false;
const both = Promise.all([first(ws, 'graphql-ws'), first(sse, 'graphql-sse')]).finally(() => { done = true; });
const timeout = setTimeout(() => { console.error('no event within 10 s'); process.exit(1); }, 10000);
(async () => {
  while (!done) {
    await create('caviar', 500);
    await create('tea', 5);
    await new Promise((r) => setTimeout(r, 100));
  }
})();
try {
  await both;
} catch (err) {
  console.error(err.message);
  process.exit(1);
}
clearTimeout(timeout);
await ws.dispose();
sse.dispose();
