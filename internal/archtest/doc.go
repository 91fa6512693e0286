// Package archtest holds only a test that enforces the layering of the
// module (the walls each package's doc.go states): report reads result
// alone, audit does not know SSH, and nothing imports the command.
package archtest
