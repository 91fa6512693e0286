// Package archtest holds only a test that enforces the layering of the
// module (the walls each package's doc.go states): report reads result
// alone, audit does not know SSH, nothing outside the command imports it,
// no test rig ships in the binary and only the demo reaches the simulators.
package archtest
