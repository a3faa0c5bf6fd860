// Reading an HDF5 file that may be corrupt without letting libhdf5 take the process down with it.
// libhdf5 1.10 can crash (SIGSEGV in its global-heap code) or loop forever on a few changed bytes, and
// no check moxlab makes from outside the library rules that out. So a file from elsewhere is first
// read completely in a forked child process; only when that child finished cleanly does the caller
// open the file itself (TensorLogReader::open_checked). The child calls nothing but libhdf5 and then
// _exit()s: no atexit handlers, no LibTorch, OpenMP or GL, so forking from the CLI or the viewer is safe.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace moxlab {

// Reads path in a child process: every group and dataset, every attribute, every string dataset, and
// the values of the datasets named in data_scope (of all datasets when it is empty). Returns when the
// child finished cleanly. Otherwise throws Error with the child's own one-line error (a checksum
// mismatch, a truncated file), or "HDF5 file P is corrupt: reading it crashed libhdf5 (SIGSEGV)", or
// "HDF5 file P is corrupt: reading it did not finish in N s" (the child is then killed).
// The outcome is remembered per file (device, inode, size, modification time and a fingerprint of its
// content): this process does not probe the same file twice. Time limit: 30 s plus 1 s per 16 MiB of file; the environment variable
// MOXLAB_HDF5_PROBE_SECONDS replaces the 30 s.
void probe_tensor_log(const std::string& path, const std::vector<std::string>& data_scope = {});

// The mechanism under probe_tensor_log: runs read() in a forked child process with a limit of limit_s
// seconds and returns when read() returned there. An exception thrown by read() is rethrown here as an
// Error with its message; a child killed by a signal is "HDF5 file <path> is corrupt: reading it crashed
// libhdf5 (SIGSEGV)"; one still running at the limit is killed: "... did not finish in N s".
// read() runs in a copy of this process after fork(): it may only read files through libhdf5 and
// allocate memory (no threads, no LibTorch, no GL). Its address space is capped a few GiB above the
// parent's.
void read_in_child(const std::string& path, const std::function<void()>& read, double limit_s);

}  // namespace moxlab
