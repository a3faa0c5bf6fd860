// Turns Brown corpus files (form C: "word/tag" tokens, one sentence a line, paragraphs marked by a
// leading tab) into plain running text: tags stripped, quotes and punctuation re-attached.
#pragma once
#include <string>
#include <vector>

namespace moxlab {

// This package's Brown files put sentence punctuation after a closing quote (`drink '' ?`) and
// double question and exclamation marks (`? ?`); both are undone to match the printed originals.
std::vector<std::string> brown_normalize_punctuation(const std::vector<std::string>& words);

// Joins already untagged tokens (after brown_normalize_punctuation) the way edited English prints them: `` and '' become ", no space
// before , . ; : ! ? ) ] } '' ' and clitics ('s n't 're ...), no space after `` ( [ { `.
std::string brown_detokenize(const std::vector<std::string>& words);

// Strips the tag from one "word/tag" token (the tag follows the last '/'; "1-1/2/cd" -> "1-1/2").
std::string brown_strip_tag(const std::string& token);

// A whole Brown file: sentences of a paragraph joined by a space, paragraphs by a blank line.
std::string brown_file_to_text(const std::string& tagged);

}  // namespace moxlab
