package main

import (
	"slices"
	"strings"

	"github.com/alecthomas/kong"
)

// flagsFirst lets flags and arguments mix, as in other command-line tools
// (`vtop t1 --ca-file X t2`): kong reads a list of arguments only where
// it is written in one piece, so the arguments are moved after the flags,
// each flag kept with its value and every word in its order. The command
// named first, if any, stays in front; "--" still ends the flags. Which
// flags take a value is read from the parser's own model.
func flagsFirst(app *kong.Application, args []string) []string {
	node := app.DefaultCmd
	var flags, positional []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		switch {
		case arg == "--":
			flags = append(flags, "--")
			return slices.Concat(flags, positional, args[i+1:])
		case strings.HasPrefix(arg, "-") && arg != "-":
			flags = append(flags, arg)
			if takesValue(node, arg) && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		case len(positional) == 0 && namedCommand(app, arg) != nil:
			node = namedCommand(app, arg)
			flags = append(flags, arg)
		default:
			positional = append(positional, arg)
		}
	}
	return append(flags, positional...)
}

// namedCommand is the command of that name, or nil.
func namedCommand(app *kong.Application, name string) *kong.Node {
	for _, child := range app.Children {
		if child.Type == kong.CommandNode && (child.Name == name || slices.Contains(child.Aliases, name)) {
			return child
		}
	}
	return nil
}

// takesValue reports whether arg, a flag of node's (or of its parents'),
// takes the next word as its value: not a boolean or a counter, and not
// written with its value (--flag=value, -fvalue). An unknown flag takes
// nothing: kong names it.
func takesValue(node *kong.Node, arg string) bool {
	if node == nil {
		return false
	}
	name, short := "", rune(0)
	if long, ok := strings.CutPrefix(arg, "--"); ok {
		if strings.Contains(long, "=") {
			return false
		}
		name = long
	} else {
		shorts := []rune(arg[1:])
		if len(shorts) != 1 {
			return false // -fvalue, or several boolean flags at once
		}
		short = shorts[0]
	}
	for _, group := range node.AllFlags(false) {
		for _, f := range group {
			if f.Name == name || (short != 0 && f.Short == short) || slices.Contains(f.Aliases, name) {
				return !f.IsBool() && !f.IsCounter()
			}
		}
	}
	return false
}
