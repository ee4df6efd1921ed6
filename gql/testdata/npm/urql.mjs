// Drives a project's API with urql (@urql/core), as a web or node app would: create, fetch by
// uid, list, update and delete a product with the caller's token in the Authorization header,
// checking every answer, then checks that the same client without the token is refused.
// The mutations are spelled in camelCase, as JavaScript apps write them: the seed's lowercase
// spelling (createproduct) answers under the camelCase key (createProduct), which a client that
// matches response keys to fields would not find.
// usage: node urql.mjs <graphql URL> <token> <uid another caller owns>
// It prints one line per step and exits 1 at the first answer that is not what it should be.
import assert from 'node:assert/strict';
import { Client, fetchExchange, gql } from '@urql/core';

const [, , url, token, othersUID] = process.argv;

const client = (headers) => new Client({
  url,
  exchanges: [fetchExchange],
  // Every call reaches the server: the checks are about its answers, not a cache.
  requestPolicy: 'network-only',
  fetchOptions: () => ({ headers }),
});
const alice = client({ authorization: `Bearer ${token}` });

// __typename, which normalized caches (urql's Graphcache, Apollo) add to every selection.
const fields = '__typename uid name price author createdAt updatedAt';
const Create = gql`mutation createProduct($data: productInput!) { createProduct(data: $data) { ${fields} } }`;
const Fetch = gql`query products($uid: ID) { products(uid: $uid) { ${fields} } }`;
const List = gql`query products { products { ${fields} } }`;
const Update = gql`mutation updateProduct($uid: ID, $data: productInput!) { updateProduct(uid: $uid, data: $data) { ${fields} } }`;
const Delete = gql`mutation deleteProduct($uid: ID) { deleteProduct(uid: $uid) { id } }`;

// ok runs one operation and returns its data, failing on any error urql reports.
async function ok(step, result) {
  const { data, error } = await result.toPromise();
  if (error) {
    console.log(`${step}: ${error.message}`);
    process.exit(1);
  }
  return data;
}

const created = (await ok('create', alice.mutation(Create, { data: { name: 'Tea', price: 3.5 } }))).createProduct;
assert.match(created.uid, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
assert.equal(created.name, 'Tea');
assert.equal(created.price, 3.5);
assert.equal(created.__typename, 'product');
console.log(`create: ${created.uid} ${created.name} ${created.price}`);

const fetched = (await ok('fetch', alice.query(Fetch, { uid: created.uid }))).products;
assert.deepEqual(fetched, [created]);
console.log(`fetch by uid: ${fetched.length} record, ${fetched[0].name}`);

const listed = (await ok('list', alice.query(List, {}))).products;
assert.ok(listed.some((p) => p.uid === created.uid), 'the list has the new product');
assert.ok(!listed.some((p) => p.uid === othersUID), "the list has another caller's product");
console.log(`list: ${listed.length} of the caller's records, none of another caller's`);

const hidden = (await ok('fetch another caller\'s', alice.query(Fetch, { uid: othersUID }))).products;
assert.deepEqual(hidden, []);
console.log(`fetch another caller's product: ${hidden.length} records`);

const updated = (await ok('update', alice.mutation(Update, { uid: created.uid, data: { price: 4.25 } }))).updateProduct;
assert.equal(updated.uid, created.uid);
assert.equal(updated.price, 4.25);
assert.equal(updated.name, 'Tea');
assert.equal(updated.createdAt, created.createdAt);
assert.ok(updated.updatedAt >= created.updatedAt);
console.log(`update: price ${created.price} -> ${updated.price}`);

const deleted = (await ok('delete', alice.mutation(Delete, { uid: created.uid }))).deleteProduct;
// The deleted record, by the id a cache evicts it by.
assert.equal(deleted.id, created.uid);
const gone = (await ok('fetch after delete', alice.query(Fetch, { uid: created.uid }))).products;
assert.deepEqual(gone, []);
console.log(`delete: ${deleted.id === created.uid ? "the record" : "?"}, then fetch: ${gone.length} records`);

const anonymous = await client({}).query(List, {}).toPromise();
assert.ok(anonymous.error, 'a call without the token is refused');
console.log(`without Authorization: ${anonymous.error.message}`);
