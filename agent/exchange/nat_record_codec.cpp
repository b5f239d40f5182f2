#include "exchange/nat_record_codec.hpp"

#include "exchange/flow_codec.hpp"
#include "exchange/record_codec.hpp"
#include "skewscope/v1/halves.pb.h"

namespace skewscope::exchange {
void encode_translations(const std::vector<WireTranslation>& translations, v1::HalvesBatch& pb) {
  for (const WireTranslation& t : translations) {
    v1::Translation* out = pb.add_translations();
    put_flow(out->mutable_original(), t.original);
    put_flow(out->mutable_translated(), t.translated);
    out->set_valid_from_ns(t.valid_from_ns);
    out->set_valid_until_ns(t.valid_until_ns);
  }
}

Result<std::vector<WireTranslation>, RecordReject> decode_translations(const v1::HalvesBatch& pb) {
  using Out = Result<std::vector<WireTranslation>, RecordReject>;
  if (static_cast<std::size_t>(pb.translations_size()) > kMaxTranslationsPerRecord)
    return Out{std::nullopt, RecordReject::invalid_content};
  std::vector<WireTranslation> out;
  out.reserve(static_cast<std::size_t>(pb.translations_size()));
  for (const v1::Translation& t : pb.translations()) {
    WireTranslation w;
    if (!t.has_original() || !t.has_translated() || !get_flow(t.original(), w.original) ||
        !get_flow(t.translated(), w.translated) || w.original == w.translated || t.valid_from_ns() <= 0 ||
        (t.valid_until_ns() != 0 && t.valid_until_ns() < t.valid_from_ns()))
      return Out{std::nullopt, RecordReject::invalid_content};
    w.valid_from_ns = t.valid_from_ns();
    w.valid_until_ns = t.valid_until_ns();
    out.push_back(w);
  }
  return Out{std::move(out), RecordReject::invalid_content};
}

}  // namespace skewscope::exchange
