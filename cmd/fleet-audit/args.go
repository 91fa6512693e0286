package main

import (
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
)

// reparsedFlag marks the second pass of a command's argument parsing, so
// that a file name starting with "-" after "--" cannot loop.
const reparsedFlag = "fa-reparsed"

// rerunWithTrailingFlags handles the documented "report results.json --html
// F" form: urfave/cli v2 stops parsing flags at the first positional
// argument, so flags after the files would be taken as more files. It runs
// the command again with the flags first and the files behind "--", and
// reports whether it did. It needs the hidden reparsedFlag on the command.
func rerunWithTrailingFlags(c *cli.Context, command string) (bool, error) {
	if c.Bool(reparsedFlag) {
		return false, nil
	}
	args := c.Args().Slice()
	for i, a := range args {
		if a == "--" {
			return false, nil
		}
		if len(a) > 1 && strings.HasPrefix(a, "-") {
			if i == 0 {
				return false, nil
			}
			rerun := append([]string{c.App.Name, command, "--" + reparsedFlag}, setFlags(c)...)
			rerun = append(rerun, args[i:]...)
			rerun = append(append(rerun, "--"), args[:i]...)
			return true, c.App.RunContext(c.Context, rerun)
		}
	}
	return false, nil
}

// setFlags gives back the flags the first pass already parsed (those before
// the files), so the second pass keeps them.
func setFlags(c *cli.Context) []string {
	var out []string
	for _, f := range c.Command.Flags {
		name := f.Names()[0]
		if !c.IsSet(name) || name == reparsedFlag {
			continue
		}
		if _, ok := f.(*cli.BoolFlag); ok {
			out = append(out, "--"+name+"="+strconv.FormatBool(c.Bool(name)))
		} else {
			out = append(out, "--"+name+"="+c.String(name))
		}
	}
	return out
}
