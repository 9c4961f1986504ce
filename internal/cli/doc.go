// Package cli is the sagebench command line: one file per subcommand, each
// parsing flags into an options struct that maps onto the Config of the
// package doing the work. Main is the only entry point; it never calls
// os.Exit and returns the documented exit code:
//
//	0  ok / gate pass
//	1  tool error (I/O, an unexpected failure)
//	2  usage or configuration error (bad flag, bad YAML, bad input file)
//	3  gate: regression
//	4  gate: inconclusive (not enough evidence to pass)
//	5  run invalid (the driver could not deliver its own schedule)
package cli
