// A webhook receiver for cmd/platform TestWebhooks: it listens on the address in argv[2],
// checks every delivery with the Standard Webhooks library against the secret of its path
// (SECRETS: a JSON object, path -> secret), answers 204 to a valid one and 401 to any other,
// and writes one JSON line per request to stdout.
import http from "node:http";
import { Webhook } from "standardwebhooks";

const [host, port] = process.argv[2].split(":");
const secrets = JSON.parse(process.env.SECRETS);

http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString();
    const line = { path: req.url, id: req.headers["webhook-id"], at: Date.now() };
    try {
      line.payload = new Webhook(secrets[req.url]).verify(body, req.headers);
      res.writeHead(204).end();
    } catch (err) {
      line.error = String(err && err.message || err);
      res.writeHead(401).end(line.error);
    }
    process.stdout.write(JSON.stringify(line) + "\n");
  });
}).listen(Number(port), host, () => process.stdout.write(JSON.stringify({ listening: true }) + "\n"));
