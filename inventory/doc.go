// Package inventory turns an inventory file into the list of hosts to audit,
// each with every connection setting resolved and the origin of every value
// recorded.
//
// The package owns the file format (documented in docs/inventory.md), its
// validation, the defaults → group → host inheritance and the lookup of
// unset values in an ssh_config file. It reports every problem of a file in
// one pass, as an errors.Join of *Error values that name a file, a line and a
// field, so an operator fixes a broken inventory in one edit.
//
// It must not open network connections, run commands or read any file other
// than the inventory and the ssh_config files the inventory or LoadOptions
// name (and the files those include). It does not print: presenting hosts is
// the command's job. Resolved values are data for argv and SSH library
// fields, never for shell text; the name, user and address checks exist to
// catch mistakes early, not to make splicing safe. The one shell text is a
// ProxyCommand, which the user wrote as such; the values its %-tokens
// splice in are checked to be inert there when it is expanded.
//
// ProxyJump chains are resolved here, hop by hop through the same
// ssh_config (see Jump), so the transport dials what this package prints.
// A ProxyCommand is resolved here and run by the transport. Options that
// cannot be honoured are errors, not ignored: connecting directly instead
// would take a different network path than ssh does. passphrase_env is only
// a variable name; the package never reads the variable, so no passphrase
// can reach an Inventory, an error or a report.
package inventory
