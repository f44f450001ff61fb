// `envdoctor mcp`: the Model Context Protocol server of src/mcp on stdin and stdout.
#include "cli/commands.h"
#include "mcp/server.h"

namespace envdoctor::cli {

int run_mcp(const McpOptions& options) {
  mcp::ServerOptions server;
  server.environment = {options.python, options.prefix, false, options.loader};
  server.no_cache = options.no_cache;
  return mcp::serve_stdio(server);
}

}  // namespace envdoctor::cli
