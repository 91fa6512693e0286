// Command maxrss runs a command and records its peak resident set size, for
// the benchmarks in bench/ that measure fleet-audit as a subprocess.
//
//	maxrss REPORT COMMAND [ARG...]
//
// It runs COMMAND with maxrss's own stdio and environment, waits for it, and
// writes "PEAK-KiB FLOOR-KiB EXIT-CODE\n" to the file REPORT (EXIT-CODE is -1
// when the command died of a signal). It exits with the command's code, or
// 125 when it could not run or measure it.
//
// It exists because a benchmark cannot measure its own child: os/exec starts
// children with vfork, and on exec Linux folds the high-water RSS of the mm
// being left, which for a vfork child is the parent's, into the child's
// ru_maxrss. A benchmark process that serves the simulated fleet is larger
// than fleet-audit, so its size would be reported instead. maxrss is small,
// so what it hands on is small, and it records how much that is: FLOOR, its
// own peak, below which PEAK cannot go. A PEAK not above FLOOR says nothing
// about the command.
//
// It must stay small: it imports only the standard library and does nothing
// but start, wait and write the report.
package main
