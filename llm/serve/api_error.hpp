// api_error.hpp: an error answered to an HTTP client as OpenAI's error object,
// {"error":{"message","type","param","code"}} with a real status (OpenAI API reference, "Error codes";
// openai-node src/resources/shared.ts: ErrorObject).
#pragma once
#include <optional>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace tg::serve {

struct api_error : std::runtime_error {
  int status;
  std::string type;                 // "invalid_request_error", "authentication_error", ...
  std::optional<std::string> param; // the request field at fault
  std::optional<std::string> code;  // "context_length_exceeded", "invalid_type", ...
  int retry_after_seconds = 0;      // sent as Retry-After when > 0

  api_error(int status, std::string type, std::string message, std::optional<std::string> param = std::nullopt,
            std::optional<std::string> code = std::nullopt)
      : std::runtime_error(std::move(message)), status(status), type(std::move(type)), param(std::move(param)),
        code(std::move(code)) {}
};

// A 400 for a field of the request: the client's fault, so never retried by OpenAI clients.
inline api_error invalid_request(std::string message, std::optional<std::string> param = std::nullopt,
                                 std::optional<std::string> code = std::nullopt) {
  return api_error(400, "invalid_request_error", std::move(message), std::move(param), std::move(code));
}

inline nlohmann::ordered_json error_body(const api_error& e) {
  nlohmann::ordered_json inner = {{"message", e.what()}, {"type", e.type}, {"param", nullptr}, {"code", nullptr}};
  if (e.param) inner["param"] = *e.param;
  if (e.code) inner["code"] = *e.code;
  return {{"error", inner}};
}

}  // namespace tg::serve
