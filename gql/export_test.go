package gql

// NewReference builds the API cfg describes with every document executed by graph-gophers'
// own executor, which cannot run relations that close a cycle. It is the oracle the
// property test (oracle_test.go) and the comparisons of other tests hold the API's
// execution to.
func NewReference(cfg Config) (*API, error) {
	a, err := New(cfg)
	if err != nil || a.schema == nil {
		return a, err
	}
	a.docs = newDocuments(a.docs.keys, nil, a.shapeOf)
	return a, nil
}
