# frozen_string_literal: true

# Rperf::UTF8 makes text valid UTF-8 where it enters the profiler (label keys
# and values, request paths, job names), so that no input can make a report
# or a log line unwritable: bytes that are not valid UTF-8 become U+FFFD,
# text in another encoding is transcoded. Valid UTF-8 is returned as is
# (the common case costs one check). It does NOT escape control characters
# (the log formats and the text views do).
module Rperf
  module UTF8
    REPLACEMENT = "\uFFFD"

    module_function

    # A valid UTF-8 String for value (value.to_s when it is not a String).
    def scrub(value)
      s = value.is_a?(String) ? value : value.to_s
      enc = s.encoding
      return s if enc == Encoding::UTF_8 && s.valid_encoding?
      return s.encode(Encoding::UTF_8) if enc == Encoding::US_ASCII && s.valid_encoding?

      if enc == Encoding::UTF_8 || enc == Encoding::BINARY || enc == Encoding::US_ASCII
        s.dup.force_encoding(Encoding::UTF_8).scrub(REPLACEMENT)
      else
        s.encode(Encoding::UTF_8, invalid: :replace, undef: :replace, replace: REPLACEMENT)
      end
    end
  end
end
