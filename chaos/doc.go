// Package chaos is the fault-injection suite: steady provider-wallet load
// over HTTP against real `pitboss serve` processes, one fault at a time
// (kill -9, a PostgreSQL restart, the Kafka broker down, a slow and then
// failing callback receiver, the projector killed mid-batch, several
// relays fighting over the lead), and after each fault the proof that
// nothing was lost or applied twice. The suite lives in the package's
// tests; package stack runs the installation they use.
//
// `go test ./chaos` runs the short form (CI); CHAOS=full (make chaos) runs
// every fault at full length, and SOAK_MINUTES=N adds a soak. The cluster
// form (TestChaosCluster: three Kafka brokers, a PostgreSQL primary and
// its synchronous standby, started by scripts/cluster.sh) runs with
// PITBOSS_CLUSTER_TEST=1 (short) or CHAOS_CLUSTER=1 (make chaos-cluster).
// See docs/reliability.md.
package chaos
