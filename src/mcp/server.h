// `envdoctor mcp`: a Model Context Protocol server on stdin and stdout
// (modelcontextprotocol.io/specification/2025-11-25; 2025-06-18, 2025-03-26 and 2024-11-05 are
// spoken too, each as that revision says).
//
// The reader thread takes one message per line and answers the lifecycle (initialize, with the
// protocol version negotiated: the client's when we speak it, else our latest), ping and
// tools/list itself, at once. Each tools/call runs on a thread of its own, so that a long check
// does not hold up a ping or a cancellation: notifications/cancelled for its id means its response
// is never sent (basic/utilities/cancellation), and guarded_pip cancelled before pip starts does
// not start it. The end of stdin is the client's shutdown (basic/lifecycle, stdio): no new calls
// are started, the ones running finish and answer (a check is short; a pip already running is not
// killed halfway), and the server exits 0.
//
// stdout carries protocol messages alone: the server writes through its own copy of fd 1 and
// points fd 1 at stderr, so nothing else in the process or its children can write to the
// protocol stream, and fd 0 at /dev/null, so no child reads the client's messages. Logging goes
// to stderr.
#pragma once

#include "environment/session.h"

namespace envdoctor::mcp {

struct ServerOptions {
  environment::EnvironmentRequest environment;  // the tools' default environment (envdoctor mcp --python)
  // Without --no-cache, the read-only tools are answered from the persistent index
  // (support/run_index.h) while their inputs are unchanged; the server also holds its entries
  // in memory between calls.
  bool no_cache = false;
};

// Serves messages read from `in` and writes responses to `out` until `in` ends. Returns the
// process exit status: 0, or 2 when the tools cannot be set up (their schemas cannot be read).
int serve(const ServerOptions& options, int in, int out);

// serve() on this process's stdin and stdout, set up as above.
int serve_stdio(const ServerOptions& options);

}  // namespace envdoctor::mcp
