//go:build race

package q5_test

// raceBuild: the test binary — which also serves the pool's engine
// processes — runs under the race detector, several times slower and
// noisier than the product.
const raceBuild = true
