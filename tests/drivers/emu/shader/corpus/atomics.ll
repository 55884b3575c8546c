; atomics.ll: global atomics from every lane of many workgroups, and a plain store per lane. The
; interpreter spreads a dispatch's workgroups over host threads; every increment must still land,
; and the maximum must be the grid's last id, however the workgroups were shared out.
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()

define amdgpu_kernel void @count(ptr addrspace(1) %counter, ptr addrspace(1) %most, ptr addrspace(1) %out) #0 {
entry:
  %tx = call i32 @llvm.amdgcn.workitem.id.x()
  %gx = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = shl i32 %gx, 6
  %gid = add i32 %base, %tx
  %old = atomicrmw add ptr addrspace(1) %counter, i32 1 monotonic, align 4
  %m = atomicrmw umax ptr addrspace(1) %most, i32 %gid monotonic, align 4
  %p = getelementptr inbounds i32, ptr addrspace(1) %out, i32 %gid
  %v = xor i32 %gid, 1431655765
  store i32 %v, ptr addrspace(1) %p, align 4
  ret void
}

attributes #0 = { nounwind "amdgpu-flat-work-group-size"="64,64" }
