// A project that runs registered documents only: a registered one runs by its hash (as
// documentId, and in Apollo's persistedQuery extension), any other is refused with
// PERSISTED_QUERY_ONLY. node trusted.mjs <endpoint> <token> <persisted-documents.json>
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

const [, , url, token, file] = process.argv;
const manifest = JSON.parse(readFileSync(file, 'utf8'));
// Code Generator writes the keys as sha256:<hex>.
const key = Object.keys(manifest).find((k) => manifest[k].startsWith('query Products'));
const hash = key.replace(/^sha256:/, '');
const post = async (body) => (await fetch(url, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) })).json();

const byId = await post({ documentId: `sha256:${hash}` });
assert.ok(Array.isArray(byId.data?.products), JSON.stringify(byId));
const byExtension = await post({ extensions: { persistedQuery: { version: 1, sha256Hash: hash } } });
assert.ok(Array.isArray(byExtension.data?.products), JSON.stringify(byExtension));
console.log(`registered: ${byId.data.products.length} products by documentId and by persistedQuery`);
const other = await post({ query: '{ productsCount }' });
assert.equal(other.errors?.[0]?.extensions?.code, 'PERSISTED_QUERY_ONLY', JSON.stringify(other));
console.log(`unregistered: ${other.errors[0].extensions.code}: ${other.errors[0].message}`);
