// answer_stream.hpp: the HTTP side of one generation: a queued job's text sent as Server-Sent
// Events (`data: <json>\n\n` chunks closed by `data: [DONE]`, the format OpenAI's and
// llama.cpp's servers send) or, when not streaming, as one JSON object at the end. Both go
// through a chunked content provider, because that is the only place cpp-httplib 0.11 lets a
// handler notice that the client has gone (DataSink::is_writable); the job is then cancelled.
#pragma once
#include <memory>

#include <httplib.h>

#include "llm/serve/job.hpp"

namespace tg::serve {

void send_streamed(std::shared_ptr<job> j, httplib::Response& res);
void send_whole(std::shared_ptr<job> j, httplib::Response& res);

}  // namespace tg::serve
