package gql

// NewReference builds the API cfg describes with every document executed by graph-gophers'
// own executor: no plan is ever made. It is the oracle the property test (oracle_test.go)
// holds the API's own execution to.
func NewReference(cfg Config) (*API, error) {
	a, err := New(cfg)
	if err != nil || a.schema == nil {
		return a, err
	}
	a.docs = newDocuments(a.docs.keys, func(string, string) *plan { return nil }, nil, a.shapeOf)
	return a, nil
}
