// The persistent index's key for one question (support/run_index.h): its words (a command line;
// an MCP tool, its arguments and the server's command line) and everything around them that
// decides the answer but is not a file: the working directory, the process's environment
// variables, the user and groups, the kernel, the CPU's hwcaps as the loader model reads them,
// the envdoctor binary (which carries the tables' version), and the node's driver and GPUs as
// read live (NodeRequest::detected). The files the answer depends on are the entry's inputs.
#pragma once

#include <string>
#include <vector>

#include "environment/node.h"

namespace envdoctor::environment {

std::string index_key(const std::vector<std::string>& words, const NodeRequest& node);

}  // namespace envdoctor::environment
