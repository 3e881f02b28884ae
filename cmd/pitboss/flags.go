package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// exitUsage is the exit code of a command line the command does not take:
// an unknown or malformed flag, or a stray argument.
const exitUsage = 2

// parseFlags parses a subcommand's flags before the subcommand does
// anything else (connects, migrates, writes). -h, -help or --help prints
// the usage to stdout and returns flag.ErrHelp, which main answers with
// exit 0; an unknown or malformed flag, or an argument after the flags,
// prints the usage to stderr and is exit 2 (main prints the error).
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	fs.SetOutput(io.Discard) // the flag package's own messages; ours follow
	err := fs.Parse(args)
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		printUsage(fs, stdout)
		return flag.ErrHelp
	}
	printUsage(fs, stderr)
	return &exitError{exitUsage, fmt.Errorf("%s: %w", fs.Name(), err)}
}

// printUsage writes "usage: pitboss <command> [flags]" and the flags.
func printUsage(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprintf(w, "usage: pitboss %s [flags]\n", fs.Name())
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		fmt.Fprintln(w, "\n(no flags; configuration comes from PITBOSS_* environment variables)")
		return
	}
	fmt.Fprintln(w, "\nflags:")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// subcommandFlags begins `pitboss <command> <subcommand> [flags]`: with
// no subcommand it prints usage and is an exit 2, with a help request
// it prints usage and returns flag.ErrHelp; otherwise it returns the
// flag set of "<command> <subcommand>", writing to out.
func subcommandFlags(command, usage string, args []string, out io.Writer) (*flag.FlagSet, error) {
	if len(args) == 0 {
		fmt.Fprint(out, usage)
		return nil, &exitError{exitUsage, fmt.Errorf("%s: no subcommand given", command)}
	}
	if isHelp(args[0]) {
		fmt.Fprint(out, usage)
		return nil, flag.ErrHelp
	}
	fs := flag.NewFlagSet(command+" "+args[0], flag.ContinueOnError)
	fs.SetOutput(out)
	return fs, nil
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "help"
}

// exitStatus is the process exit code of run's error: 0 for none and for
// a help request, the error's own code when it carries one, else 1.
func exitStatus(err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return 1
}
