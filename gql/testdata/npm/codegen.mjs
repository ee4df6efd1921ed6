// GraphQL Code Generator (client preset) over one project's live endpoint, with a query, a
// mutation and a subscription, and the persisted documents (sha256) that the project can
// register. node codegen.mjs http://127.0.0.1:8080/p/demo/api/v1/graphql <token> <out dir>
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate } from '@graphql-codegen/cli';

const [, , url, token, out] = process.argv;
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'operations.graphql'), `query Products { products { id name price createdAt } }
mutation UpdateProduct($uid: ID, $data: productInput!) { updateProduct(uid: $uid, data: $data) { id price } }
subscription OnProduct { products { op record { id name price } } }
`);
await generate({
  schema: { [url]: { headers: { Authorization: `Bearer ${token}` } } },
  documents: [join(out, 'operations.graphql')],
  generates: { [join(out, 'gql') + '/']: { preset: 'client', presetConfig: { persistedDocuments: { hashAlgorithm: 'sha256' } } } },
  silent: true,
}, true);
const types = readFileSync(join(out, 'gql', 'graphql.ts'), 'utf8');
for (const name of ['ProductsQuery', 'UpdateProductMutation', 'OnProductSubscription', 'OnProductDocument']) {
  assert.ok(types.includes(`export type ${name}`) || types.includes(`export const ${name}`), `graphql.ts has no ${name}`);
}
const manifest = JSON.parse(readFileSync(join(out, 'gql', 'persisted-documents.json'), 'utf8'));
assert.equal(Object.keys(manifest).length, 3);
console.log(`codegen: ${types.split('\n').length} lines of types, OnProductSubscription among them; ${Object.keys(manifest).length} persisted documents in ${join(out, 'gql', 'persisted-documents.json')}`);
