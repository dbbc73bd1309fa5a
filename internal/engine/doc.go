// Package engine holds what the planner knows about each inference engine:
// one file per engine (vllm.go, llamacpp.go, none.go) behind one interface,
// Engine, and a registry of them by name.
//
// An engine says which device kinds it runs on and which it claims when a
// request names no engine (Preference, Default), its memory budget on a
// device (Memory: the fraction of total memory and the margin it keeps
// free), its KV cache rules and the cache types it adds (KVRules,
// CacheTypes), which precision levels it runs and what it loads for them
// (Levels, CannotLoad, Load; and, where its kernels decide it rather than
// a device's precision list, which it runs on a GPU of a given compute
// capability: the optional LevelRule), whether it splits tensors or only layers
// (Parallelism), and how a plan is started with it (Args, Env, Command,
// StartNotes).
//
// The planner (internal/plan) looks engines up by name and asks them; it
// never compares engine names, so engine name literals live here only.
// Planning inputs are engine-neutral views defined here (Device,
// Placement), which the planner fills from its own plan, so this package
// does not import the planner. The engine list that requests accept, the
// CLI offers, the request schema (schema/request.schema.json) and the
// docs (docs/requests.md) list is Names(); the KV cache types they list
// are CacheTypes(). internal/schema's tests keep the schema and the docs
// equal to both.
//
// Adding an engine: write a type implementing Engine (embed Base for the
// rules it does not have) in a file of its own and add it to the list
// registered in registry.go; then add its name to the schema's enums and
// to docs/requests.md, which the tests check. A test registers an engine
// of its own with Register and removes it with Unregister.
package engine
