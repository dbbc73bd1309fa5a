/* SPDX-License-Identifier: MIT
 * Copyright (c) 2026 The ai-hwaccel authors. See LICENSE.
 *
 * ai_hwaccel.hpp: header-only C++17 wrapper of ai_hwaccel.h.
 *
 *     #include <ai_hwaccel.hpp>
 *
 *     hwaccel::require_compatible_abi();            // once, at start-up
 *     std::string registry = hwaccel::detect();     // this machine
 *     std::string plan = hwaccel::plan_sharding(R"({"model":{"params_b":70}})");
 *
 * Errors are exceptions: a function whose answer is the library's error
 * object {"error":{"code":...,"message":...}} throws hwaccel::error, whose
 * code() is the stable code (see ai_hwaccel.h) and what() the message.  A NULL
 * answer (malloc failed inside the library) throws std::bad_alloc.  Hosts
 * that do not use exceptions call the hwaccel::raw functions, which return
 * the owned answer as is, and test it with hwaccel::parse_error().
 *
 * Answers are JSON text; parse them with the JSON library of your choice.
 * This header parses only the error envelope, without a JSON library.
 *
 * Ownership: hwaccel::owned_string is a std::unique_ptr<char, free_string>
 * that calls hwaccel_free_string() exactly once; the std::string functions
 * copy the answer and free it even when the copy throws.
 *
 * Everything here is as thread-safe as the C API (fully); see ai_hwaccel.h for
 * blocking, fork() and signal rules.
 */
#ifndef AI_HWACCEL_HPP_7F3A21
#define AI_HWACCEL_HPP_7F3A21

#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "ai_hwaccel.h"

#if __cplusplus < 201703L && !(defined(_MSVC_LANG) && _MSVC_LANG >= 201703L)
#error "ai_hwaccel.hpp needs C++17"
#endif

namespace hwaccel {

/* free_string: stateless deleter, so owned_string is exactly one pointer
 * (a function-pointer deleter would double its size). */
struct free_string {
    void operator()(char *s) const noexcept { hwaccel_free_string(s); }
};

/* owned_string: an answer of the library; freed once when it goes away. */
using owned_string = std::unique_ptr<char, free_string>;
static_assert(sizeof(owned_string) == sizeof(char *), "owned_string must be a bare pointer");

/* error: the library answered an error object.  code() is one of the stable
 * codes of ai_hwaccel.h ("invalid_json", "invalid_argument", ...), or
 * "abi_mismatch" from require_compatible_abi() (a code of this wrapper, not
 * of the library).  An unknown code should be treated like "internal". */
class error : public std::runtime_error {
public:
    error(std::string code, const std::string &message)
        : std::runtime_error(message), code_(std::move(code)) {}
    const std::string &code() const noexcept { return code_; }
    std::string message() const { return what(); }

private:
    std::string code_;
};

/* error_info: the two fields of an error object. */
struct error_info {
    std::string code;
    std::string message;
};

namespace detail {

inline void skip_ws(std::string_view s, std::size_t &i) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
}

inline bool consume(std::string_view s, std::size_t &i, std::string_view token) {
    skip_ws(s, i);
    if (s.substr(i, token.size()) != token) return false;
    i += token.size();
    return true;
}

inline void append_utf8(std::string &out, std::uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

inline bool hex4(std::string_view s, std::size_t i, std::uint32_t &v) {
    if (i + 4 > s.size()) return false;
    v = 0;
    for (std::size_t k = i; k < i + 4; k++) {
        char c = s[k];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= static_cast<std::uint32_t>(c - '0');
        else if (c >= 'a' && c <= 'f') v |= static_cast<std::uint32_t>(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= static_cast<std::uint32_t>(c - 'A' + 10);
        else return false;
    }
    return true;
}

/* json_string reads a JSON string starting at s[i] == '"' (after blanks),
 * decoding escapes (\uXXXX with surrogate pairs; a lone surrogate becomes
 * U+FFFD). */
inline std::optional<std::string> json_string(std::string_view s, std::size_t &i) {
    if (!consume(s, i, "\"")) return std::nullopt;
    std::string out;
    while (i < s.size()) {
        char c = s[i++];
        if (c == '"') return out;
        if (c != '\\') {
            out += c;
            continue;
        }
        if (i >= s.size()) return std::nullopt;
        char e = s[i++];
        switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
            std::uint32_t cp;
            if (!hex4(s, i, cp)) return std::nullopt;
            i += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                std::uint32_t lo;
                if (i + 6 <= s.size() && s[i] == '\\' && s[i + 1] == 'u' && hex4(s, i + 2, lo) &&
                    lo >= 0xDC00 && lo <= 0xDFFF) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    i += 6;
                } else {
                    cp = 0xFFFD;
                }
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                cp = 0xFFFD;
            }
            append_utf8(out, cp);
            break;
        }
        default: return std::nullopt;
        }
    }
    return std::nullopt;
}

/* skip_value skips one JSON value of a member we do not read ("details").
 * Strings are skipped with their escapes; containers by depth. */
inline bool skip_value(std::string_view s, std::size_t &i) {
    skip_ws(s, i);
    if (i >= s.size()) return false;
    if (s[i] == '"') return json_string(s, i).has_value();
    if (s[i] != '{' && s[i] != '[') {
        while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']') i++;
        return i < s.size();
    }
    int depth = 0;
    while (i < s.size()) {
        char c = s[i];
        if (c == '"') {
            if (!json_string(s, i)) return false;
            continue;
        }
        i++;
        if (c == '{' || c == '[') depth++;
        else if ((c == '}' || c == ']') && --depth == 0) return true;
    }
    return false;
}

}  // namespace detail

/* parse_error returns the code and message when answer is an error object
 * ({"error":{...}} as the first and only member), and nullopt for any other
 * answer.  Success answers never start with an "error" member, so this looks
 * no further than the envelope. */
inline std::optional<error_info> parse_error(std::string_view answer) {
    using namespace detail;
    std::size_t i = 0;
    if (!consume(answer, i, "{") || !consume(answer, i, "\"error\"") || !consume(answer, i, ":") ||
        !consume(answer, i, "{"))
        return std::nullopt;
    error_info info{"internal", "malformed error object"};
    bool have_code = false;
    if (consume(answer, i, "}")) return info;
    for (;;) {
        std::optional<std::string> key = json_string(answer, i);
        if (!key || !consume(answer, i, ":")) return info;
        if (*key == "code" || *key == "message") {
            std::optional<std::string> value = json_string(answer, i);
            if (!value) return info;
            if (*key == "code") {
                info.code = std::move(*value);
                have_code = true;
            } else {
                info.message = std::move(*value);
            }
        } else if (!skip_value(answer, i)) {
            return info;
        }
        if (consume(answer, i, ",")) continue;
        break;
    }
    if (!have_code) info.code = "internal";
    return info;
}

/* raw: the C functions with the answer owned; nothing thrown.  The result is
 * null only when malloc failed inside the library. */
namespace raw {
inline owned_string detect(const char *options_json = nullptr) {
    return owned_string(hwaccel_detect_json(options_json));
}
inline owned_string suggest_quant(const char *request_json) {
    return owned_string(hwaccel_suggest_quant(request_json));
}
inline owned_string plan_sharding(const char *request_json) {
    return owned_string(hwaccel_plan_sharding(request_json));
}
inline owned_string estimate_training(const char *request_json) {
    return owned_string(hwaccel_estimate_training(request_json));
}
/* Since 0.2.0: the catalog and what fits (NULL request: defaults). */
inline owned_string models(const char *request_json = nullptr) {
    return owned_string(hwaccel_models_json(request_json));
}
inline owned_string fit(const char *request_json = nullptr) {
    return owned_string(hwaccel_fit_json(request_json));
}
/* rent (issue 26) */
inline owned_string rent(const char *request) { return owned_string(hwaccel_rent_json(request)); }
}  // namespace raw

/* take copies an owned answer into a std::string, or throws hwaccel::error
 * for an error object and std::bad_alloc for NULL.  The answer is freed on
 * every path (it is owned by `answer`). */
inline std::string take(owned_string answer) {
    if (!answer) throw std::bad_alloc();
    std::string text(answer.get());
    if (std::optional<error_info> e = parse_error(text)) throw error(std::move(e->code), e->message);
    return text;
}

/* c_text is the NUL-terminated text of a request, or throws
 * hwaccel::error("invalid_argument") when the std::string holds a NUL byte:
 * the C functions would read only the text before it, so
 * "{}\0{\"sysroot\":\"/x\"}" would silently detect "/" instead of /x. */
inline const char *c_text(const std::string &json) {
    if (json.find('\0') != std::string::npos)
        throw error("invalid_argument", "request holds a NUL byte at offset " + std::to_string(json.find('\0')) +
                                            "; the library reads text only up to the first NUL");
    return json.c_str();
}

/* The API: JSON text in, JSON text out (see ai_hwaccel.h for the shapes). */
inline std::string detect() { return take(raw::detect(nullptr)); }
inline std::string detect(const std::string &options_json) {
    return take(raw::detect(c_text(options_json)));
}
inline std::string suggest_quant(const std::string &request_json) {
    return take(raw::suggest_quant(c_text(request_json)));
}
inline std::string plan_sharding(const std::string &request_json) {
    return take(raw::plan_sharding(c_text(request_json)));
}
inline std::string estimate_training(const std::string &request_json) {
    return take(raw::estimate_training(c_text(request_json)));
}
/* Since 0.2.0: hwaccel_models_json (the catalog, {"filter":...,"quant":...})
 * and hwaccel_fit_json (which catalog models fit this machine or a given
 * "registry"); without an argument the whole catalog and this machine. */
inline std::string models() { return take(raw::models(nullptr)); }
inline std::string models(const std::string &request_json) {
    return take(raw::models(c_text(request_json)));
}
inline std::string fit() { return take(raw::fit(nullptr)); }
inline std::string fit(const std::string &request_json) {
    return take(raw::fit(c_text(request_json)));
}
/* rent (issue 26) */
inline std::string rent(const std::string &request) { return take(raw::rent(c_text(request))); }

/* Versions: version() and abi_version() of the loaded library; header_*
 * those of the header this program was compiled with. */
inline std::string_view version() noexcept { return hwaccel_version(); }
inline int abi_version() noexcept { return hwaccel_abi_version(); }
constexpr std::string_view header_version() noexcept { return HWACCEL_VERSION_STRING; }
constexpr int header_abi_version() noexcept { return HWACCEL_ABI_VERSION; }

/* abi_compatible: the loaded library speaks the ABI this program was built
 * for. */
inline bool abi_compatible() noexcept { return abi_version() == header_abi_version(); }

/* require_compatible_abi throws hwaccel::error("abi_mismatch") when the
 * loaded library has another ABI version than the header.  Call it once at
 * start-up. */
inline void require_compatible_abi() {
    if (!abi_compatible())
        throw error("abi_mismatch", "libai_hwaccel " + std::string(version()) + " has ABI " +
                                        std::to_string(abi_version()) + ", this program was built for ABI " +
                                        std::to_string(header_abi_version()));
}

}  // namespace hwaccel

#endif /* AI_HWACCEL_HPP_7F3A21 */
