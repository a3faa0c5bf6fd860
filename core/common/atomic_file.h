// Atomic file replacement: write to "<path>.tmp.<pid>", fsync, then rename over <path>.
// A crash or kill at any moment leaves either the old file or the new one, never a torn one.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace moxlab {

// Calls write(tmp_path) to produce the file, then atomically moves it to path.
// The temporary is removed if write throws.
void write_file_atomically(const std::string& path, const std::function<void(const std::string&)>& write);

// Removes the temporaries "<path>.tmp.<pid>" that writers killed mid-write left behind: those whose
// pid is no live process of this host. A live writer's (a concurrent save) is kept. Returns the
// removed files. (One host writes a file at a time: a pid cannot be probed on another.)
std::vector<std::string> remove_orphaned_temp_files(const std::string& path);

// Convenience form for in-memory content.
void write_text_atomically(const std::string& path, const std::string& content);

// Reads a whole file; throws Error naming the path when it cannot be opened.
std::string read_file(const std::string& path);

// Creates a directory and its parents (no error if it exists).
void make_dirs(const std::string& path);

bool file_exists(const std::string& path);

}  // namespace moxlab
