#pragma once
// sha256 (OpenSSL's libcrypto) as lowercase hex.
#include <string>
#include <string_view>

namespace mtabench {
std::string sha256_hex(std::string_view data);
std::string sha256_hex(const void* data, std::size_t size);
}  // namespace mtabench
