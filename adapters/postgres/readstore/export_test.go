package readstore

// InMemory returns m with a rebuild written to the shadow schema run in
// passes held whole in memory, numbered in memory: the rebuild as it was
// before compareSliced.
func InMemory(m *ReadModels) *ReadModels {
	c := *m
	c.inMemory = true
	return &c
}
