//go:build !race

package q5_test

const raceBuild = false
