// Sends graphql-js's getIntrospectionQuery() (default options, as tools send it) to the API at
// addr with the Host header host, and builds a client schema from the answer with
// buildClientSchema: node introspect.mjs 127.0.0.1:8080 demo.localhost:8080
import http from 'node:http';
import { getIntrospectionQuery, buildClientSchema, printSchema } from 'graphql';
const [, , addr, host, full] = process.argv;
const opts = full ? { descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true, oneOf: true } : {};
const body = JSON.stringify({ query: getIntrospectionQuery(opts) });
const [hostname, port] = addr.split(':');
const req = http.request({ hostname, port, path: '/api/v1/graphql', method: 'POST', headers: { host, 'content-type': 'application/json', accept: 'application/graphql-response+json' } }, (res) => {
  let s = ''; res.on('data', (c) => (s += c)); res.on('end', () => {
    const r = JSON.parse(s);
    if (r.errors) { console.log(res.statusCode, JSON.stringify(r.errors).slice(0, 600)); process.exit(1); }
    const schema = buildClientSchema(r.data);
    console.log(res.statusCode, printSchema(schema).split('\n').length, 'lines of SDL');
  });
});
req.end(body);
