// Apollo Client 4 against one project, as an app uses it with no configuration beyond the
// endpoint: a normalised cache (no typePolicies), mutations that update a list already read,
// a subscription through GraphQLWsLink, and automatic persisted queries through
// createPersistedQueryLink. Prints what each step saw; exits 1 when one is wrong.
// node apollo.mjs http://127.0.0.1:8080/p/demo/api/v1/graphql <token>
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import WebSocket from 'ws';
import { createClient } from 'graphql-ws';
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { createPersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { getMainDefinition } from '@apollo/client/utilities';

const [, , url, token] = process.argv;
const headers = { Authorization: `Bearer ${token}` };

// Every HTTP request the clients send, as { op, query: whether the document was sent }.
const sent = [];
const logged = (input, init) => {
  const body = JSON.parse(init.body);
  sent.push({ op: body.operationName, query: typeof body.query === 'string', hash: body.extensions?.persistedQuery?.sha256Hash });
  return fetch(input, init);
};

const ws = createClient({ url: url.replace(/^http/, 'ws'), webSocketImpl: WebSocket, connectionParams: headers, retryAttempts: 0 });
const http = new HttpLink({ uri: url, headers, fetch: logged });
const client = new ApolloClient({
  cache: new InMemoryCache(),
  link: ApolloLink.split(({ query }) => {
    const def = getMainDefinition(query);
    return def.kind === 'OperationDefinition' && def.operation === 'subscription';
  }, new GraphQLWsLink(ws), http),
});

const Products = gql`query Products { products { id name price } }`;
const Create = gql`mutation CreateProduct($data: productInput!) { createProduct(data: $data) { id name price } }`;
const Update = gql`mutation UpdateProduct($uid: ID, $data: productInput!) { updateProduct(uid: $uid, data: $data) { id price } }`;
const Delete = gql`mutation DeleteProduct($uid: ID) { deleteProduct(uid: $uid) { id } }`;
const OnProduct = gql`subscription OnProduct { products { op record { id name price } } }`;

const tea = (await client.mutate({ mutation: Create, variables: { data: { name: 'Tea', price: 3.5 } } })).data.createProduct;
const cake = (await client.mutate({ mutation: Create, variables: { data: { name: 'Cake', price: 2 } } })).data.createProduct;
const listed = (await client.query({ query: Products })).data.products;
assert.deepEqual(listed.map((p) => p.id).filter((id) => id === tea.id || id === cake.id), [tea.id, cake.id]);
console.log(`query: ${listed.length} products, cached as ${client.cache.identify(listed[0])}`);

// The list read above is updated in the cache by the mutation's answer alone.
await client.mutate({ mutation: Update, variables: { uid: tea.id, data: { price: 4.25 } } });
const cached = client.readQuery({ query: Products }).products.find((p) => p.id === tea.id);
assert.equal(cached.price, 4.25);
assert.equal(sent.filter((s) => s.op === 'Products').length, 1, 'the list must not be fetched again');
console.log(`mutation: the cached list shows ${cached.name} at ${cached.price} without fetching it again`);

// Delete answers the record: its id is what the cache evicts.
const gone = (await client.mutate({ mutation: Delete, variables: { uid: cake.id } })).data.deleteProduct;
client.cache.evict({ id: client.cache.identify(gone) });
client.cache.gc();
assert.ok(!client.readQuery({ query: Products }).products.some((p) => p.id === cake.id));
console.log(`delete: evicted ${client.cache.identify(gone)} from the cached list`);

// A subscription gives no sign that it is running: create until one arrives.
const event = await new Promise((resolve, reject) => {
  const sub = client.subscribe({ query: OnProduct }).subscribe({
    next: ({ data }) => { if (data?.products.record?.name === 'Scone') { sub.unsubscribe(); resolve(data.products); } },
    error: reject,
  });
  const timer = setInterval(() => client.mutate({ mutation: Create, variables: { data: { name: 'Scone', price: 1.5 } } }).catch(reject), 150);
  const stop = () => clearInterval(timer);
  setTimeout(() => { stop(); reject(new Error('no subscription event within 10 s')); }, 10000);
  sub.add?.(stop);
}).finally(() => {});
assert.equal(event.op, 'CREATE');
console.log(`subscription: ${event.op} ${event.record.name} (${client.cache.identify(event.record)})`);
await ws.dispose();

// Automatic persisted queries: the hash first; the document once, when the server asks.
const sha256 = (text) => createHash('sha256').update(text).digest('hex');
const apq = () => new ApolloClient({ cache: new InMemoryCache(), link: createPersistedQueryLink({ sha256 }).concat(new HttpLink({ uri: url, headers, fetch: logged })) });
const Count = gql`query Count { productsCount }`;
sent.length = 0;
const first = (await apq().query({ query: Count })).data.productsCount;
const second = (await apq().query({ query: Count })).data.productsCount;
assert.equal(first, second);
assert.deepEqual(sent.map((s) => s.query), [false, true, false], `requests: ${JSON.stringify(sent)}`);
console.log(`persisted queries: ${sent.map((s) => (s.query ? 'hash+document' : 'hash')).join(', ')} (sha256 ${sent[0].hash.slice(0, 12)}…)`);
process.exit(0);
