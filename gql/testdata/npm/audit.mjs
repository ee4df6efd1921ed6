// Runs graphql-http's server audit against one project of a local `platform serve`. Node's
// resolver knows no *.localhost and its fetch drops a Host header, so requests go through
// node:http to 127.0.0.1 with the project's Host.
import http from 'node:http';
import { auditServer } from 'graphql-http';
const [, , addr, host] = process.argv;
const fetchFn = (u, init = {}) => new Promise((resolve, reject) => {
  const url = new URL(u);
  const [hostname, port] = addr.split(':');
  const headers = Object.fromEntries(new Headers(init.headers));
  headers.host = host;
  const req = http.request({ hostname, port, path: url.pathname + url.search, method: init.method || 'GET', headers }, (res) => {
    const chunks = [];
    res.on('data', (c) => chunks.push(c));
    res.on('end', () => {
      const h = new Headers();
      for (const [k, v] of Object.entries(res.headers)) h.set(k, Array.isArray(v) ? v.join(', ') : v);
      const body = [204, 304].includes(res.statusCode) ? null : Buffer.concat(chunks);
      resolve(new Response(body, { status: res.statusCode, headers: h }));
    });
  });
  req.on('error', reject);
  if (init.body) req.write(init.body);
  req.end();
});
const results = await auditServer({ url: `http://${host}/api/v1/graphql`, fetchFn });
let bad = 0;
for (const r of results) { if (r.status !== 'ok') { bad++; console.log(r.status, r.id, r.name, r.reason || ''); } }
console.log(`${results.length - bad} ok, ${bad} not ok`);
process.exit(bad ? 1 : 0);
