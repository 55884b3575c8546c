; xlane.ll: cross-lane primitives: a DPP row reduction, permlanex16, readlane, ds_swizzle, ds_bpermute,
; and an atomic add to one address (which the atomic optimizer turns into a wave reduction).
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.update.dpp.i32(i32, i32, i32, i32, i32, i1)
declare i32 @llvm.amdgcn.permlanex16(i32, i32, i32, i32, i1, i1)
declare i32 @llvm.amdgcn.readlane(i32, i32)
declare i32 @llvm.amdgcn.ds.swizzle(i32, i32)
declare i32 @llvm.amdgcn.ds.bpermute(i32, i32)

define amdgpu_kernel void @wave_sum(ptr addrspace(1) noalias %out, ptr addrspace(1) noalias readonly %a) #0 {
entry:
  %lid = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = getelementptr inbounds i32, ptr addrspace(1) %a, i32 %lid
  %v = load i32, ptr addrspace(1) %pa, align 4
  %d1 = call i32 @llvm.amdgcn.update.dpp.i32(i32 0, i32 %v, i32 273, i32 15, i32 15, i1 true)
  %s1 = add i32 %v, %d1
  %d2 = call i32 @llvm.amdgcn.update.dpp.i32(i32 0, i32 %s1, i32 274, i32 15, i32 15, i1 true)
  %s2 = add i32 %s1, %d2
  %d4 = call i32 @llvm.amdgcn.update.dpp.i32(i32 0, i32 %s2, i32 276, i32 15, i32 15, i1 true)
  %s4 = add i32 %s2, %d4
  %d8 = call i32 @llvm.amdgcn.update.dpp.i32(i32 0, i32 %s4, i32 280, i32 15, i32 15, i1 true)
  %s8 = add i32 %s4, %d8
  %x = call i32 @llvm.amdgcn.permlanex16(i32 %s8, i32 %s8, i32 -1, i32 -1, i1 false, i1 false)
  %s16 = add i32 %s8, %x
  %r = call i32 @llvm.amdgcn.readlane(i32 %s16, i32 31)
  %sw = call i32 @llvm.amdgcn.ds.swizzle(i32 %v, i32 1055)
  %addr = shl i32 %lid, 2
  %rev = sub i32 124, %addr
  %bp = call i32 @llvm.amdgcn.ds.bpermute(i32 %rev, i32 %v)
  %t = add i32 %sw, %bp
  %u = add i32 %t, %r
  %po = getelementptr inbounds i32, ptr addrspace(1) %out, i32 %lid
  store i32 %u, ptr addrspace(1) %po, align 4
  ret void
}

define amdgpu_kernel void @atomic_sum(ptr addrspace(1) %out, ptr addrspace(1) noalias readonly %a) #0 {
entry:
  %lid = call i32 @llvm.amdgcn.workitem.id.x()
  %gid = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = shl i32 %gid, 5
  %i = add nuw nsw i32 %base, %lid
  %pa = getelementptr inbounds i32, ptr addrspace(1) %a, i32 %i
  %v = load i32, ptr addrspace(1) %pa, align 4
  %old = atomicrmw add ptr addrspace(1) %out, i32 %v syncscope("agent") monotonic, align 4
  ret void
}

attributes #0 = { nounwind "amdgpu-flat-work-group-size"="32,32" }
