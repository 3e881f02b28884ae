package main

import (
	"fmt"
	"io"
	"runtime/debug"
	"time"

	"github.com/pitboss/pitboss/adapters/postgres/readstore"
)

// replayFingerprint is what, besides --full and --memory (the slices),
// must not change for an interrupted `pitboss replay --full` to resume:
// the build of pitboss that ran it.
func replayFingerprint() string {
	v := "pitboss"
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	v += " " + bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" || s.Key == "vcs.modified" {
			v += " " + s.Key + "=" + s.Value
		}
	}
	return v
}

// printResume says whether the replay resumes an interrupted one.
func printResume(w io.Writer, r readstore.ResumeReport) {
	switch {
	case r.From > 0 && r.From >= r.Passes:
		fmt.Fprintf(w, "pitboss replay: resuming after pass %d of %d (position %d): every pass of an interrupted replay was complete\n",
			r.From, r.Passes, r.Position)
	case r.From > 0:
		fmt.Fprintf(w, "pitboss replay: resuming from pass %d of %d (position %d): passes 1-%d of an interrupted replay were complete\n",
			r.From+1, r.Passes, r.Position, r.From)
	case r.Reason != "":
		fmt.Fprintf(w, "pitboss replay: not resuming the interrupted replay (%s): starting afresh, %d passes\n", r.Reason, r.Passes)
	}
}

// printSwap says what the swap did, and how far the rebuild lagged the
// live head at the swap.
func printSwap(w io.Writer, sw readstore.SwapReport) {
	fmt.Fprintf(w, "swapped the rebuilt read models in: at the swap the rebuild (up to position %d) lagged the live head "+
		"(position %d) by %d events, %s of event time; %d event applications the projectors had made meanwhile were caught up, "+
		"the projectors apply the rest; the swap took %s (%s of it building the keys and indexes)\n", sw.RebuiltHead, sw.LiveHead,
		sw.Behind, sw.BehindTime.Round(time.Millisecond), sw.CaughtUp, sw.Took.Round(time.Millisecond), sw.Prepare.Round(time.Millisecond))
}
