// SHA-256 of a byte string as lowercase hex (OpenSSL's libcrypto underneath).
#pragma once

#include <string>

namespace engine::core {

std::string sha256_hex(const std::string& bytes);

}  // namespace engine::core
