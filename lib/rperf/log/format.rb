# frozen_string_literal: true

# Rperf::Log::Format turns one ordered, flat Hash of fields into one log line,
# as logfmt (`key=value key="value with spaces"`) or as a JSON object. Both
# formats carry the same keys in the same order, so docs/logging.md describes
# them once. It does NOT decide which fields exist (Rperf::Log::Measurement
# and Rperf::ContentionLog do) and does not write anything.
require "json"

module Rperf
  module Log
    module Format
      FORMATS = %i[logfmt json].freeze

      # Keys may only use [A-Za-z0-9_.:-]; anything else becomes "_" so a label
      # key from user code can never break the line structure.
      KEY_UNSAFE = /[^A-Za-z0-9_.:\-]/
      # A logfmt value needs quotes when it is empty or holds a space, quote,
      # equals sign, backslash or control character.
      NEEDS_QUOTES = /[ "=\\\x00-\x1f\x7f]/
      NEEDS_ESCAPE = /["\\\x00-\x1f\x7f]/

      module_function

      # Returns :logfmt or :json, or raises ArgumentError naming the choices.
      def validate(format)
        sym = format.to_s.downcase.tr("-", "_").to_sym
        sym = :json if sym == :json_lines || sym == :jsonl
        return sym if FORMATS.include?(sym)

        raise ArgumentError, "unknown log format #{format.inspect} (use :logfmt or :json)"
      end

      def line(format, fields)
        format == :json ? json(fields) : logfmt(fields)
      end

      def logfmt(fields)
        out = +""
        fields.each do |key, value|
          next if value.nil?

          out << " " unless out.empty?
          out << safe_key(key) << "=" << logfmt_value(value)
        end
        out
      end

      def json(fields)
        clean = {}
        fields.each do |key, value|
          next if value.nil?

          clean[safe_key(key)] = json_value(value)
        end
        JSON.generate(clean)
      end

      # Keys repeat on every line, so their checked form is cached; the cache
      # is bounded (label keys come through the cardinality cap, but fields
      # added by an application might not).
      KEY_CACHE_MAX = 4096
      @key_cache = {}

      def safe_key(key)
        cache = Format.instance_variable_get(:@key_cache)
        hit = cache[key]
        return hit if hit

        s = key.to_s
        s = s.match?(KEY_UNSAFE) ? s.gsub(KEY_UNSAFE, "_") : s.dup
        s.freeze
        cache[key] = s if cache.size < KEY_CACHE_MAX
        s
      end

      def logfmt_value(value)
        case value
        when Integer, true, false then value.to_s
        when Float then format_float(value)
        else
          s = value.to_s
          return s unless s.empty? || s.match?(NEEDS_QUOTES)
          return "\"#{s}\"" unless s.match?(NEEDS_ESCAPE)

          escaped = s.gsub(/[\\"\n\r\t]|[\x00-\x1f\x7f]/) do |c|
            case c
            when "\\" then "\\\\"
            when '"' then '\\"'
            when "\n" then "\\n"
            when "\r" then "\\r"
            when "\t" then "\\t"
            else format("\\u%04x", c.ord)
            end
          end
          "\"#{escaped}\""
        end
      end

      def json_value(value)
        case value
        when Integer, true, false then value
        when Float then value.finite? ? value : nil
        else value.to_s
        end
      end

      # Floats are written with at most 3 decimals and no exponent: log
      # readers and grep patterns both handle "12.345" but not "1.2345e-05".
      # Integer arithmetic: Float#to_s is the slowest step of a line.
      def format_float(value)
        return "0" unless value.finite?

        thousandths = (value * 1000).round
        return Kernel.format("%.3f", value) if thousandths.abs >= 1 << 62

        sign = thousandths.negative? ? "-" : ""
        whole, frac = thousandths.abs.divmod(1000)
        return "#{sign}#{whole}" if frac.zero?

        frac_s = frac.to_s
        frac_s = ("0" * (3 - frac_s.size)) + frac_s if frac_s.size < 3
        frac_s = frac_s.sub(/0+\z/, "") if frac_s.end_with?("0")
        "#{sign}#{whole}.#{frac_s}"
      end
    end
  end
end
