#include "intervention.h"

namespace attnlab {

namespace {

struct SiteRow {
  PatchSite site;
  const char* name;
  const char* hook;
};
// One row per site: its name and its hook's, so that the two never disagree.
constexpr SiteRow kSites[] = {
    {PatchSite::resid_pre, "resid_pre", "hook_resid_pre"}, {PatchSite::z, "z", "attn.hook_z"},
    {PatchSite::pattern, "pattern", "attn.hook_pattern"},  {PatchSite::attn_out, "attn_out", "hook_attn_out"},
    {PatchSite::mlp_out, "mlp_out", "hook_mlp_out"},
};

const SiteRow& row_of(PatchSite site) {
  for (const SiteRow& r : kSites)
    if (r.site == site) return r;
  return kSites[0];
}

}  // namespace

const char* patch_site_name(PatchSite site) { return row_of(site).name; }

bool patch_site_from_name(const std::string& name, PatchSite& out) {
  for (const SiteRow& r : kSites)
    if (name == r.name) {
      out = r.site;
      return true;
    }
  return false;
}

std::string patch_site_hook(PatchSite site, int layer) { return block_hook(layer, row_of(site).hook); }

}  // namespace attnlab
