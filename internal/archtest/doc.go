// Package archtest holds only a test that enforces the layering of the
// module: report never reaches the SSH transport, audit does not know SSH,
// and nothing imports the command.
package archtest
