// file_parser.hpp: (internal) fills a gguf::file from its bytes, checking every field.
#pragma once

namespace tg::gguf {

class file;

class file_parser {
 public:
  // Reads f.bytes_ into f's metadata, pools and tensor infos; throws usage_error on bad input.
  static void parse(file& f);
};

}  // namespace tg::gguf
