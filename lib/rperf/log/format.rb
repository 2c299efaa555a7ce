# frozen_string_literal: true

# Rperf::Log::Format turns one ordered, flat Hash of fields into one log line,
# as logfmt (`key=value key="value with spaces"`) or as a JSON object. Both
# formats carry the same keys in the same order, so docs/logging.md describes
# them once. Text that is not valid UTF-8 is scrubbed (U+FFFD), so a field
# can never make a line unwritable. It does NOT decide which fields exist
# (Rperf::Log::Measurement and Rperf::ContentionLog do) and does not write
# anything.
require "json"
require_relative "../utf8"

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
      KEY_CACHE = {} # rubocop:disable Style/MutableConstant -- a cache, filled below

      def safe_key(key)
        cache = KEY_CACHE
        hit = cache[key]
        return hit if hit

        s = UTF8.scrub(key.to_s)
        s = s.match?(KEY_UNSAFE) ? s.gsub(KEY_UNSAFE, "_") : s.dup
        s.freeze
        cache[key] = s if cache.size < KEY_CACHE_MAX
        s
      end

      def logfmt_value(value)
        case value
        when Float then format_float(value)
        when Integer, true, false then value.to_s
        else
          s = UTF8.scrub(value)
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
        when Float then value.finite? ? value.round(3) : nil
        else UTF8.scrub(value)
        end
      end

      # Floats are written with at most 3 decimals and no exponent: log
      # readers and grep patterns both handle "12.345" but not "1.2345e-05".
      # Integer arithmetic and a table of the 1000 fractions: Float#to_s was
      # the slowest step of a line.
      FRACTIONS = Array.new(1000) { |i| Kernel.format("%03d", i).sub(/0+\z/, "").freeze }.freeze
      FLOAT_EXACT_LIMIT = 1 << 62

      def format_float(value)
        return "0" unless value.finite?

        thousandths = (value * 1000).round
        return Kernel.format("%.3f", value) if thousandths.abs >= FLOAT_EXACT_LIMIT

        if thousandths.negative?
          whole, frac = (-thousandths).divmod(1000)
          frac.zero? ? "-#{whole}" : "-#{whole}.#{FRACTIONS[frac]}"
        else
          whole, frac = thousandths.divmod(1000)
          frac.zero? ? whole.to_s : "#{whole}.#{FRACTIONS[frac]}"
        end
      end
    end
  end
end
