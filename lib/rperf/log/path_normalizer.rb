# frozen_string_literal: true

# Rperf::Log::PathNormalizer maps a request path to a route-like template so
# that one endpoint gives one label set: /users/123 -> /users/:id,
# /orders/550e8400-e29b-41d4-a716-446655440000 -> /orders/:uuid, long hex
# tokens -> /:hex. The query string is dropped. It does NOT know the
# application's routes: a custom labeller should be used when it can (for
# example the router's own pattern).
module Rperf
  module Log
    module PathNormalizer
      UUID = /\A\h{8}-\h{4}-\h{4}-\h{4}-\h{12}\z/
      INTEGER = /\A\d+\z/
      # 16+ hex digits with at least one digit: digests, object ids, tokens.
      HEX = /\A(?=.*\d)\h{16,}\z/
      # Segments this long are ids or slugs, never route names.
      MAX_SEGMENT = 64
      MAX_SEGMENTS = 16

      # Paths made only of short word segments and integer ids (the common
      # case) are handled by one substitution.
      SIMPLE = %r{\A(?:/(?:[A-Za-z_\-]{1,64}|\d{1,64}))+\z}
      INTEGER_SEGMENT = %r{/\d+(?=/|\z)}

      module_function

      # The path with its digits deleted when #normalize would make exactly
      # those segments :id (a simple path with an integer segment: each one
      # becomes empty), else nil. Paths of one shape have one template, so
      # a cache keyed by shape holds one entry per route, not one per id.
      def id_shape(path)
        return nil unless path.is_a?(String) && path.ascii_only? && path.match?(SIMPLE)

        shape = path.delete("0-9")
        shape.bytesize < path.bytesize ? shape : nil
      end

      def normalize(path)
        path = path.to_s
        q = path.index("?")
        path = path[0, q] if q
        return "/" if path.empty? || path == "/"
        if path.match?(SIMPLE) && path.count("/") <= MAX_SEGMENTS
          return path.match?(/\d/) ? path.gsub(INTEGER_SEGMENT, "/:id") : path
        end

        segments = path.split("/", -1)
        segments.shift if segments.first == ""
        trailing = segments.last == "" && segments.size > 1
        segments.pop if trailing
        truncated = segments.size > MAX_SEGMENTS
        segments = segments.first(MAX_SEGMENTS) if truncated
        out = segments.map { |seg| normalize_segment(seg) }
        out << "..." if truncated
        "/" + out.join("/")
      end

      def normalize_segment(seg)
        return seg if seg.empty?

        if seg.match?(INTEGER) then ":id"
        elsif seg.match?(UUID) then ":uuid"
        elsif seg.match?(HEX) then ":hex"
        elsif seg.bytesize > MAX_SEGMENT then ":long"
        elsif !seg.include?(".") then seg
        else
          # "123.json" keeps the extension: /users/123.json -> /users/:id.json
          base, dot, ext = seg.rpartition(".")
          if !dot.empty? && !base.empty? && ext.match?(/\A[A-Za-z]{1,5}\z/)
            n = normalize_segment(base)
            n.start_with?(":") ? "#{n}.#{ext}" : seg
          else
            seg
          end
        end
      end
    end
  end
end
