#include "engine/bench/python_expression.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>

#include "engine/bench/python_values.hpp"
#include "engine/core/errors.hpp"

namespace engine::bench {
namespace {

struct Token {
  enum class Kind { kNumber, kString, kName, kOp, kEnd } kind = Kind::kEnd;
  std::string text;  // a string's value unescaped; a number's or name's or operator's text
};

std::vector<Token> tokenize(const std::string& s) {
  std::vector<Token> tokens;
  size_t i = 0;
  auto fail = [&](const std::string& why) {
    throw py::Error(why + " at column " + std::to_string(i + 1));
  };
  while (i < s.size()) {
    const char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '.' && i + 1 < s.size() &&
                std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      size_t j = i;
      while (j < s.size() &&
             (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '.' ||
              ((s[j] == '+' || s[j] == '-') && (s[j - 1] == 'e' || s[j - 1] == 'E')))) {
        ++j;
      }
      tokens.push_back({Token::Kind::kNumber, s.substr(i, j - i)});
      i = j;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      tokens.push_back({Token::Kind::kName, s.substr(i, j - i)});
      i = j;
    } else if (c == '\'' || c == '"') {
      std::string text;
      size_t j = i + 1;
      for (; j < s.size() && s[j] != c; ++j) {
        if (s[j] != '\\' || j + 1 == s.size()) {
          text += s[j];
          continue;
        }
        const char e = s[++j];
        switch (e) {
          case 'n':
            text += '\n';
            break;
          case 't':
            text += '\t';
            break;
          case 'r':
            text += '\r';
            break;
          case '\\':
          case '\'':
          case '"':
            text += e;
            break;
          default:
            text += '\\';
            text += e;  // Python keeps an unknown escape as it is
        }
      }
      if (j >= s.size()) fail("a string that does not end");
      tokens.push_back({Token::Kind::kString, text});
      i = j + 1;
    } else {
      static const char* const kOps[] = {"//", "**", "==", "!=", "<=", ">=", "(", ")", "[", "]",
                                         ",",  ".",  ":",  "+",  "-",  "*",  "/", "%", "<", ">"};
      bool found = false;
      for (const char* op : kOps) {
        if (s.compare(i, std::char_traits<char>::length(op), op) == 0) {
          tokens.push_back({Token::Kind::kOp, op});
          i += std::char_traits<char>::length(op);
          found = true;
          break;
        }
      }
      if (!found) fail(std::string("an unexpected character '") + c + "'");
    }
  }
  tokens.push_back({});
  return tokens;
}

// An expression, evaluated when asked (so that a branch not taken never runs).
using Node = std::function<PyValue()>;

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  Node parse() {
    Node node = expression();
    if (peek().kind != Token::Kind::kEnd) throw py::Error("unexpected '" + peek().text + "'");
    return node;
  }

 private:
  const Token& peek(size_t ahead = 0) const {
    return tokens_[std::min(at_ + ahead, tokens_.size() - 1)];
  }
  bool is(const char* text, Token::Kind kind = Token::Kind::kOp) const {
    return peek().kind == kind && peek().text == text;
  }
  bool keyword(const char* word) const { return is(word, Token::Kind::kName); }
  bool take(const char* text, Token::Kind kind = Token::Kind::kOp) {
    if (!is(text, kind)) return false;
    ++at_;
    return true;
  }
  void expect(const char* text) {
    if (!take(text)) {
      throw py::Error(std::string("expected '") + text + "', found '" +
                      (peek().kind == Token::Kind::kEnd ? "the end" : peek().text) + "'");
    }
  }

  Node expression() {
    Node body = or_test();
    if (!take("if", Token::Kind::kName)) return body;
    Node test = or_test();
    if (!take("else", Token::Kind::kName))
      throw py::Error("a conditional expression without 'else'");
    Node other = expression();
    return [=] { return python_truth(test()) ? body() : other(); };
  }

  Node or_test() {
    Node left = and_test();
    while (take("or", Token::Kind::kName)) {
      Node right = and_test();
      left = [=] {
        PyValue l = left();
        return python_truth(l) ? l : right();
      };
    }
    return left;
  }

  Node and_test() {
    Node left = not_test();
    while (take("and", Token::Kind::kName)) {
      Node right = not_test();
      left = [=] {
        PyValue l = left();
        return python_truth(l) ? right() : l;
      };
    }
    return left;
  }

  Node not_test() {
    if (take("not", Token::Kind::kName)) {
      Node operand = not_test();
      return [=] { return PyValue(!python_truth(operand())); };
    }
    return comparison();
  }

  // a < b <= c: each comparison with the next operand, all of them true
  Node comparison() {
    Node first = arithmetic();
    std::vector<std::pair<std::string, Node>> rest;
    while (true) {
      std::string op;
      if (peek().kind == Token::Kind::kOp &&
          (is("==") || is("!=") || is("<") || is("<=") || is(">") || is(">="))) {
        op = peek().text;
        ++at_;
      } else if (take("in", Token::Kind::kName)) {
        op = "in";
      } else if (keyword("not") && peek(1).kind == Token::Kind::kName && peek(1).text == "in") {
        at_ += 2;
        op = "not in";
      } else if (take("is", Token::Kind::kName)) {
        op = take("not", Token::Kind::kName) ? "is not" : "is";
      } else {
        break;
      }
      rest.emplace_back(op, arithmetic());
    }
    if (rest.empty()) return first;
    return [=] {
      PyValue left = first();
      for (const auto& [op, node] : rest) {
        PyValue right = node();
        if (!py::compare(left, op, right)) return PyValue(false);
        left = std::move(right);
      }
      return PyValue(true);
    };
  }

  Node arithmetic() {
    Node left = term();
    while (is("+") || is("-")) {
      const std::string op = tokens_[at_++].text;
      Node right = term();
      left = [=] { return py::binary(left(), op, right()); };
    }
    return left;
  }

  Node term() {
    Node left = factor();
    while (is("*") || is("/") || is("//") || is("%")) {
      const std::string op = tokens_[at_++].text;
      Node right = factor();
      left = [=] { return py::binary(left(), op, right()); };
    }
    return left;
  }

  Node factor() {
    if (is("-") || is("+")) {
      const std::string op = tokens_[at_++].text;
      Node operand = factor();
      return [=] { return py::binary(PyValue(int64_t{0}), op, operand()); };
    }
    Node base = primary();
    if (take("**")) {
      Node exponent = factor();
      return [=] { return py::binary(base(), "**", exponent()); };
    }
    return base;
  }

  std::vector<Node> arguments() {
    std::vector<Node> args;
    while (!is(")")) {
      args.push_back(expression());
      if (!take(",")) break;
    }
    expect(")");
    return args;
  }

  Node primary() {
    Node node = atom();
    while (true) {
      if (take(".")) {
        if (peek().kind != Token::Kind::kName) throw py::Error("a name expected after '.'");
        const std::string name = tokens_[at_++].text;
        if (!is("(")) {
          node = [=] { return py::attribute(node(), name); };
          continue;
        }
        ++at_;
        const auto args = arguments();
        node = [=] {
          PyList values;
          for (const auto& a : args) values.push_back(a());
          return py::method(node(), name, values);
        };
      } else if (take("(")) {
        const auto args = arguments();
        node = [=] {
          PyList values;
          for (const auto& a : args) values.push_back(a());
          return py::call(node(), values);
        };
      } else if (take("[")) {
        Node from = is(":") ? Node() : expression();
        if (take(":")) {
          Node to = is("]") ? Node() : expression();
          expect("]");
          node = [=] {
            return py::slice(node(), from ? from() : PyValue(), to ? to() : PyValue());
          };
        } else {
          expect("]");
          node = [=] { return py::index(node(), from()); };
        }
      } else {
        return node;
      }
    }
  }

  Node atom() {
    const Token token = peek();
    ++at_;
    switch (token.kind) {
      case Token::Kind::kNumber: {
        const PyValue v = py::number(token.text);
        return [=] { return v; };
      }
      case Token::Kind::kString: {
        std::string text = token.text;  // 'a' 'b' is 'ab'
        while (peek().kind == Token::Kind::kString) text += tokens_[at_++].text;
        return [=] { return PyValue(text); };
      }
      case Token::Kind::kName: {
        const std::string name = token.text;
        if (name == "True" || name == "False") return [=] { return PyValue(name == "True"); };
        if (name == "None") return [] { return PyValue(); };
        return [=] { return py::global(name); };
      }
      case Token::Kind::kOp:
        if (token.text == "(") {
          Node inner = expression();
          expect(")");
          return inner;
        }
        if (token.text == "[") {
          std::vector<Node> items;
          while (!is("]")) {
            items.push_back(expression());
            if (!take(",")) break;
          }
          expect("]");
          return [=] {
            PyList list;
            for (const auto& item : items) list.push_back(item());
            return PyValue(list);
          };
        }
        break;
      case Token::Kind::kEnd:
        throw py::Error("the expression ends too early");
    }
    throw py::Error("unexpected '" + token.text + "'");
  }

  std::vector<Token> tokens_;
  size_t at_ = 0;
};

}  // namespace

PyValue evaluate_python(const std::string& expression) {
  try {
    auto tokens = tokenize(expression);
    // the parser and the evaluator recurse once per token at most: a config's expression is a
    // line, and this bound keeps a pathological one from the end of the stack
    if (tokens.size() > 4096) throw py::Error("more than 4096 tokens");
    return Parser(std::move(tokens)).parse()();
  } catch (const py::Error& e) {
    throw core::UsageError("cannot evaluate the Python expression '" + expression +
                           "': " + e.what());
  }
}

}  // namespace engine::bench
