// Uploads a file to a project as a browser or node app does with the GraphQL multipart
// request spec, with node's own FormData, Blob and fetch: apollo-upload-client 20 (the one
// for Apollo Client 4) needs node 22.13 or later, and version 18 needs Apollo Client 3.
// Then downloads the file at its url, whole and by Range, and checks every answer.
// usage: node upload.mjs <graphql URL> <token>
// It prints one line per step and exits 1 at the first answer that is not what it should be.
import assert from 'node:assert/strict';

const [, , url, token] = process.argv;
const auth = { authorization: `Bearer ${token}` };
const bytes = new TextEncoder().encode('hello from node, '.repeat(64));

const form = new FormData();
form.append('operations', JSON.stringify({
  query: 'mutation($docs: [Upload]) { createPost(data: {title: "from node", docs: $docs}) { id docs { name size mimeType etag url } } }',
  variables: { docs: [null] },
}));
form.append('map', JSON.stringify({ 0: ['variables.docs.0'] }));
form.append('0', new Blob([bytes], { type: 'text/plain' }), 'hello.txt');

// Without the header a cross-site form cannot send, the upload is refused.
let res = await fetch(url, { method: 'POST', headers: auth, body: form });
assert.equal(res.status, 400);
assert.equal((await res.json()).errors[0].extensions.code, 'BAD_REQUEST');
console.log('without Apollo-Require-Preflight: 400 BAD_REQUEST');

res = await fetch(url, { method: 'POST', headers: { ...auth, 'apollo-require-preflight': 'true' }, body: form });
const body = await res.json();
assert.equal(res.status, 200, JSON.stringify(body));
assert.equal(body.errors, undefined, JSON.stringify(body.errors));
const [doc] = body.data.createPost.docs;
assert.equal(doc.name, 'hello.txt');
assert.equal(doc.size, bytes.length);
assert.equal(doc.mimeType, 'text/plain');
console.log(`uploaded: ${JSON.stringify(doc)}`);

res = await fetch(doc.url, { headers: auth });
assert.equal(res.status, 200);
assert.deepEqual(new Uint8Array(await res.arrayBuffer()), bytes);
assert.equal(res.headers.get('etag'), `"${doc.etag}"`);
console.log(`downloaded: ${res.status}, ETag ${res.headers.get('etag')}`);

res = await fetch(doc.url, { headers: { ...auth, range: 'bytes=0-4' } });
assert.equal(res.status, 206);
assert.equal(await res.text(), 'hello');
console.log(`Range bytes=0-4: ${res.status} ${res.headers.get('content-range')}`);
